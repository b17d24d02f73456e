/* Data IDs from butler datastore paths (parsers/butler_path.c): each path
 * is written from the default file template by hand, for the quantum
 * dimensions of real pipeline tasks. */
#include "check.h"

#include "parsers/butler_path.h"

/* "key=value ..." in enum order, for one comparison per path */
static const char *ids_of(const char *path)
{
    static char out[1024];
    struct tl_span ids[TL_BID_COUNT];
    tl_butler_path_ids(path, ids);
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < TL_BID_COUNT; i++)
        if (ids[i].p)
            n += (size_t)snprintf(out + n, sizeof out - n, "%s%s=%.*s", n ? " " : "",
                                  tl_bid_names[i], (int)ids[i].n, ids[i].p);
    return out;
}

int main(void)
{
    /* calibrateImage: instrument, visit, detector (band, physical_filter
     * implied); visit.day_obs is a directory only; the run has '_' itself */
    CHECK_STR(ids_of("/repo/main/LSSTCam/runs/nightly/20240311/d_2024_03_11/DM-43178/"
                     "calibrateImage_metadata/20240311/r/r_57/2024031100123/"
                     "calibrateImage_metadata_LSSTCam_r_r_57_2024031100123_R22_S11_LSSTCam_runs_"
                     "nightly_20240311_d_2024_03_11_DM-43178.json"),
              "label=calibrateImage run=LSSTCam/runs/nightly/20240311/d_2024_03_11/DM-43178 "
              "instrument=LSSTCam band=r physical_filter=r_57 visit=2024031100123 detector=R22_S11");
    /* isr: exposure, so an obs_id (with '_') and no visit */
    CHECK_STR(ids_of("/repo/u/me/t1/isr_metadata/20240311/20240311/r/r_57/MC_O_20240311_000123/"
                     "isr_metadata_LSSTCam_r_r_57_MC_O_20240311_000123_R04_SW1_u_me_t1.yaml"),
              "label=isr run=u/me/t1 instrument=LSSTCam band=r physical_filter=r_57 detector=R04_SW1");
    /* assembleCoadd: tract, patch, band, skymap */
    CHECK_STR(ids_of("/datastore/HSC/runs/RC2/w_2024_10/DM-43178/assembleCoadd_metadata/9813/40/r/"
                     "assembleCoadd_metadata_9813_40_r_hsc_rings_v1_HSC_runs_RC2_w_2024_10_DM-43178.yaml"),
              "label=assembleCoadd run=HSC/runs/RC2/w_2024_10/DM-43178 tract=9813 patch=40 band=r "
              "skymap=hsc_rings_v1");
    /* makeWarp: tract, patch, visit, skymap */
    CHECK_STR(ids_of("r/u/someone/DM-1/makeWarp_metadata/9813/40/20240311/r/r_57/2024031100123/"
                     "makeWarp_metadata_LSSTCam_9813_40_r_r_57_2024031100123_lsst_cells_v1_u_someone_"
                     "DM-1.json"),
              "label=makeWarp run=u/someone/DM-1 instrument=LSSTCam tract=9813 patch=40 band=r "
              "physical_filter=r_57 visit=2024031100123 skymap=lsst_cells_v1");
    /* forcedPhotCcd: visit, detector and tract, skymap */
    CHECK_STR(ids_of("/r/run1/forcedPhotCcd_metadata/9813/20240311/r/r_57/2024031100123/"
                     "forcedPhotCcd_metadata_LSSTCam_9813_r_r_57_2024031100123_R22_S11_lsst_cells_v1_"
                     "run1.json.zst"),
              "label=forcedPhotCcd run=run1 instrument=LSSTCam tract=9813 band=r physical_filter=r_57 "
              "visit=2024031100123 detector=R22_S11 skymap=lsst_cells_v1");
    /* HSC: the detector's full name is 1_53 */
    CHECK_STR(ids_of("/repo/HSC/runs/RC2/calibrate_metadata/r/HSC-R/903334/"
                     "calibrate_metadata_HSC_r_HSC-R_903334_1_53_HSC_runs_RC2.yaml"),
              "label=calibrate run=HSC/runs/RC2 instrument=HSC band=r physical_filter=HSC-R "
              "visit=903334 detector=1_53");
    /* instrument and detector only (a calibration combine) */
    CHECK_STR(ids_of("/repo/u/me/calib/cpBiasCombine_metadata/"
                     "cpBiasCombine_metadata_LSSTCam_R22_S11_u_me_calib.yaml"),
              "label=cpBiasCombine run=u/me/calib instrument=LSSTCam detector=R22_S11");
    /* a layout that keeps physical_filter and the exposure out of the
     * directories (the project's own fixture): the detector ends the name
     * and is tagged; what stands before it cannot be split without the
     * dimensions and is left untagged -- never a skymap without a tract */
    CHECK_STR(ids_of("u/demo/run1/isr_metadata/20240101/i/"
                     "isr_metadata_LSSTCam_i_i_39_2024010100042_R22_S11_u_demo_run1.yaml"),
              "label=isr run=u/demo/run1 instrument=LSSTCam band=i detector=R22_S11");
    /* HSC with a numeric detector */
    CHECK_STR(ids_of("/repo/HSC/runs/RC2/calibrate_metadata/i/HSC-I/30012/"
                     "calibrate_metadata_HSC_i_HSC-I_30012_98_HSC_runs_RC2.yaml"),
              "label=calibrate run=HSC/runs/RC2 instrument=HSC band=i physical_filter=HSC-I "
              "visit=30012 detector=98");
    /* no data id at all */
    CHECK_STR(ids_of("/repo/run9/init_metadata/init_metadata_run9.json"), "label=init run=run9");
    /* Gen2: pointing/filter/label/visit */
    CHECK_STR(ids_of("hsc/00533/HSC-R/singleFrameDriver_metadata/0903334.boost"),
              "label=singleFrameDriver physical_filter=HSC-R visit=0903334");
    /* not the default template: the name does not end with the run; only
     * the label is sure */
    CHECK_STR(ids_of("/x/y/task_metadata/12/task_metadata_12_R22_S11_custom.json"), "label=task");
    CHECK_STR(ids_of("/tmp/quantum.json"), "");
    CHECK_STR(ids_of("task_metadata_x.json"), "");
    CHECK_STR(ids_of(""), "");
    CHECK_STR(ids_of("///a_metadata///a_metadata_.json"), "label=a");
    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}
