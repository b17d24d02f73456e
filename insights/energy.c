/* Energy and emissions (`tasklens energy`) from CPU time and memory-time
 * with a stated power model, in the spirit of codecarbon:
 *   kWh = PUE x (sum cpu_time_s x W_core + sum peak_RSS_GiB x wall_s x W_GiB) / 3.6e6
 * Energy the records carry (codecarbon's own measurement) is summed apart,
 * shown beside the estimate. See insights.h. */
#include <math.h>

#include "insights/insights.h"

void tl_power_default(struct tl_power *pw)
{
    *pw = (struct tl_power){10, 0.375, 1.0, 475};
}

void tl_energy_add(struct tl_energy *e, const struct tl_task_row *r, const struct tl_power *pw)
{
    e->attempts++;
    if (isfinite(r->v[TL_V_CPU])) e->cpu_kwh += r->v[TL_V_CPU] * pw->w_core / 3.6e6;
    else e->no_cpu++;
    if (isfinite(r->v[TL_V_MEM]) && isfinite(r->v[TL_V_WALL]))
        e->mem_kwh += r->v[TL_V_MEM] / TL_GIB * r->v[TL_V_WALL] * pw->w_gib / 3.6e6;
    else e->no_mem++;
    if (isfinite(r->v[TL_V_ENERGY])) {
        e->measured++;
        e->measured_kwh += r->v[TL_V_ENERGY] / 3.6e6;
        if (isfinite(r->v[TL_V_EMISSIONS])) e->measured_kg += r->v[TL_V_EMISSIONS];
    }
}
