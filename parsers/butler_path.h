/* Data IDs from a butler datastore path.
 *
 * The butler names each `<label>_metadata` file with its default file
 * template (daf_butler configs/datastores/fileDatastore.yaml):
 *
 *   {run:/}/{datasetType}/{tract:?}/{patch:?}/{visit.day_obs:?}/
 *   {exposure.day_obs:?}/{band:?}/{subfilter:?}/{physical_filter:?}/
 *   {visit:?}/{exposure.obs_id:?}/{datasetType}_{component:?}_
 *   {instrument:?}_{tract:?}_{patch:?}_{band:?}_{physical_filter:?}_
 *   {visit:?}_{exposure.obs_id:?}_{detector.full_name:?}_{skymap:?}_
 *   {skypix:?}_{run}.{ext}
 *
 * Empty fields are dropped, and the run's `/` become `_` in the file name.
 * Values may hold `_` themselves (physical_filter r_57, skymap
 * hsc_rings_v1, detector R22_S11), so the name cannot be split on `_`:
 * instead the run is the directories before `<label>_metadata/` whose
 * `_`-joined names end the file name (the longest such), and the
 * directories after it are found in the rest of the name, in order. A
 * directory value that is not in the name is a day_obs or subfilter. What
 * comes before the first one is the instrument; what comes after the last
 * is the detector's full name, then the skymap when the quantum has a
 * tract (a number before any word: then numbers before the band are tract
 * and patch, else a number is the visit). Without a tract there is no
 * skymap: a detector name ending the rest is the detector, and values a
 * layout kept out of the directories are left untagged, never guessed
 * into a concatenation. Gen2 paths (`.../HSC-R/singleFrameDriver_metadata/
 * 0903334.boost`) give the filter and the visit. */
#ifndef TL_BUTLER_PATH_H
#define TL_BUTLER_PATH_H

#include <stddef.h>

enum tl_bid {
    TL_BID_LABEL,
    TL_BID_RUN,
    TL_BID_INSTRUMENT,
    TL_BID_TRACT,
    TL_BID_PATCH,
    TL_BID_BAND,
    TL_BID_PHYSICAL_FILTER,
    TL_BID_VISIT,
    TL_BID_DETECTOR,
    TL_BID_SKYMAP,
    TL_BID_COUNT
};

extern const char *const tl_bid_names[TL_BID_COUNT];

struct tl_span {
    const char *p; /* into the path; NULL when absent */
    size_t n;
};

/* Fills ids (all absent first) from the path. */
void tl_butler_path_ids(const char *path, struct tl_span ids[TL_BID_COUNT]);

#endif
