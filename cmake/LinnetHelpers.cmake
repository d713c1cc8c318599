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
