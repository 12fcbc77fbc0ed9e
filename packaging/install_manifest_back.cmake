# SPDX-License-Identifier: Apache-2.0
# Run by cpack after the staging install (CPACK_PRE_BUILD_SCRIPTS): the build's install_manifest.txt
# as it was before (install_manifest_aside.cmake says why), or none where there was none.
set(manifest "${CPACK_INGERO_BINARY_DIR}/install_manifest.txt")
set(aside "${CPACK_PACKAGE_DIRECTORY}/install_manifest.txt.before-cpack")
if(EXISTS "${aside}")
  file(RENAME "${aside}" "${manifest}")
elseif(EXISTS "${aside}.none")
  file(REMOVE "${manifest}" "${aside}.none")
endif()
