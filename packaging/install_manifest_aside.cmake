# SPDX-License-Identifier: Apache-2.0
# cpack stages the package with the build's install script, and CMake's install script always writes
# its list of installed files to BUILD/install_manifest.txt: a `cpack -B DIR` would write into the
# build and overwrite the list of a real `cmake --install` (the one an uninstall reads) with the
# staging folder's files. Run by cpack before the staging install (CPACK_INSTALL_SCRIPTS): the
# build's list is put aside in DIR; install_manifest_back.cmake puts it back.
set(manifest "${CPACK_INGERO_BINARY_DIR}/install_manifest.txt")
set(aside "${CPACK_PACKAGE_DIRECTORY}/install_manifest.txt.before-cpack")
file(REMOVE "${aside}" "${aside}.none")
if(EXISTS "${manifest}")
  file(COPY_FILE "${manifest}" "${aside}")
else()
  file(TOUCH "${aside}.none")
endif()
