# Run by CPack after it has installed the files into its staging tree, before it builds a package
# from them (CPACK_PRE_BUILD_SCRIPTS). For the .deb, it does what Debian policy asks for and an
# install rule cannot: man pages compressed with `gzip -9n`, the package's changelog.Debian.gz
# beside its copyright file, and no .comment or .note sections in the (already stripped) binary.
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()

set(root ${CPACK_TEMPORARY_INSTALL_DIRECTORY}${CPACK_PACKAGING_INSTALL_PREFIX})
find_program(GZIP gzip REQUIRED)
find_program(STRIP strip)

file(GLOB man_pages ${root}/share/man/man*/*.[1-9])
foreach(page IN LISTS man_pages)
  execute_process(COMMAND ${GZIP} -9nf ${page} COMMAND_ERROR_IS_FATAL ANY)
endforeach()

if(STRIP)
  file(GLOB programs ${root}/bin/*)
  foreach(program IN LISTS programs)
    execute_process(COMMAND ${STRIP} --remove-section=.comment --remove-section=.note ${program}
                    COMMAND_ERROR_IS_FATAL ANY)
  endforeach()
endif()

# The changelog's date is the build's, or SOURCE_DATE_EPOCH's when that is set.
set(DEBIAN_VERSION "${CPACK_PACKAGE_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
string(TIMESTAMP DEBIAN_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(MAINTAINER "${CPACK_DEBIAN_PACKAGE_MAINTAINER}")
set(doc ${root}/share/doc/${CPACK_PACKAGE_NAME})
configure_file(${CPACK_DEBIAN_CHANGELOG_TEMPLATE} ${doc}/changelog.Debian @ONLY)
file(CHMOD ${doc}/changelog.Debian PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
execute_process(COMMAND ${GZIP} -9nf ${doc}/changelog.Debian COMMAND_ERROR_IS_FATAL ANY)
