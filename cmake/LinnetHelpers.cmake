# Helpers shared by linnet's libraries and tools.

# linnet_add_library(name SOURCES... [LINK lib...])
# A plain C++ library (exceptions and RTTI on) for layers that do not define
# MLIR dialects. MLIR-based layers use add_mlir_library and link `MLIR`
# (libMLIR.so) so that no binary mixes static MLIR with the shared one.
function(linnet_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_link_libraries(${name} PUBLIC ${ARG_LINK})
  target_include_directories(${name} PUBLIC
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
endfunction()

# linnet_optimize_when_sanitized(target...)
# The sanitized build compiles at -O0 (scripts/sanitize), and libraries that
# walk JSON or evaluate element by element run 10-40x slower there than in a
# release build: the largest share of the sanitized suite's time. At -O1 ASan
# and UBSan still check every access and operation; only these libraries'
# compile time grows. For plain C++ libraries: a library that includes MLIR
# would lose the precompiled header (LinnetPch.cmake), which costs more.
function(linnet_optimize_when_sanitized)
  if(LINNET_SANITIZE OR LINNET_ENABLE_FUZZ)
    foreach(t ${ARGN})
      target_compile_options(${t} PRIVATE -O1)
    endforeach()
  endif()
endfunction()
