# The Debian package (CPack DEB): `bash scripts/build-deb.sh` configures a
# build with prefix /usr (so GNUInstallDirs puts the configuration in /etc)
# and runs `cpack -G DEB` in it. What goes in is what `cmake --install`
# installs (deploy/CMakeLists.txt, cli/CMakeLists.txt), plus the control
# files in deploy/debian/: the conffile list, the postinst that makes the
# `tasklens` system user, prerm/postrm.
#
# Dependencies: dpkg-shlibdeps reads the libraries the binary links (pcre2,
# jansson, yaml, zstd, zlib, msgpack, sqlite, snappy). libcurl and librdkafka
# are opened when a sink or source first needs them (core/dynlib.h), so
# dpkg-shlibdeps cannot see them: they are Recommends, which apt installs by
# default and a minimal site may leave out.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tasklens)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "tasklens developers <tasklens@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "resource traces of scientific workflows as live numbers")
# the extended description, one paragraph (CPack indents each line)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "tasklens reads what workflow systems record about every task (Work Queue
and TaskVine transaction logs, LSST task metadata, Chrome traces, DASF,
Spark, Parsl, Nextflow, Snakemake, codecarbon, line_profiler) and turns it
into per-category resource quantiles: a summary table, an HTML report,
advice on what to request, and a daemon that follows logs into InfluxDB or
Prometheus-compatible stores for the bundled Grafana dashboards.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/tasklens/tasklens")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser") # the postinst's
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4, librdkafka1")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/conffiles ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
    ${PROJECT_SOURCE_DIR}/deploy/debian/prerm ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "package: CMAKE_INSTALL_PREFIX is ${CMAKE_INSTALL_PREFIX}; a .deb wants /usr "
                 "(scripts/build-deb.sh sets it)")
endif()
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
include(CPack)
