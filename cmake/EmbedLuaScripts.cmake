# embed_lua_scripts(OUTPUT file PRELUDES file... DIRECTORY dir SCRIPTS name...)
#
# Writes a C++ source defining redlockrun::lock::scripts::<name> for each <dir>/<name>.lua, each the
# preludes, in order, followed by the script, together with the SHA1 that EVALSHA expects. Runs at
# configure time; editing a script re-runs the configuration.
function(embed_lua_scripts)
  cmake_parse_arguments(ARG "" "OUTPUT;DIRECTORY" "PRELUDES;SCRIPTS" ${ARGN})
  set(delimiter "redlockrun_lua")
  set(prelude "")
  foreach(part IN LISTS ARG_PRELUDES)
    file(READ ${CMAKE_CURRENT_SOURCE_DIR}/${part} text)
    string(APPEND prelude "${text}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${part})
  endforeach()
  set(body "")
  foreach(name IN LISTS ARG_SCRIPTS)
    set(path ${ARG_DIRECTORY}/${name}.lua)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
    file(READ ${CMAKE_CURRENT_SOURCE_DIR}/${path} script)
    set(source "${prelude}${script}")
    string(FIND "${source}" ")${delimiter}\"" clash)
    if(NOT clash EQUAL -1)
      message(FATAL_ERROR "${path} contains the raw-string delimiter ${delimiter}")
    endif()
    string(SHA1 sha1 "${source}")
    string(APPEND body
      "const redis::Script ${name}{\"${name}\", R\"${delimiter}(${source})${delimiter}\", \"${sha1}\"};\n\n")
  endforeach()
  file(CONFIGURE OUTPUT ${ARG_OUTPUT} CONTENT
"// Generated from ${ARG_DIRECTORY}/*.lua by cmake/EmbedLuaScripts.cmake. Do not edit.
#include \"lock/scripts.hpp\"

namespace redlockrun::lock::scripts {

${body}} // namespace redlockrun::lock::scripts
" @ONLY)
endfunction()
