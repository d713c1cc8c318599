# Writes ${PROJECT_BINARY_DIR}/layers.txt: every linnet library of lib/ and
# the libraries it links directly, one "A -> B" line each, sorted. The
# architecture document's layer graph is checked against it
# (scripts/check-architecture, test/Driver/architecture.test), so each arrow
# in docs/architecture.md is an arrow of the CMake target graph.
function(linnet_collect_targets dir out)
  get_property(here DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    linnet_collect_targets(${sub} more)
    list(APPEND here ${more})
  endforeach()
  set(${out} ${here} PARENT_SCOPE)
endfunction()

function(linnet_write_layer_graph)
  linnet_collect_targets(${PROJECT_SOURCE_DIR}/lib targets)
  set(lines "")
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(NOT t MATCHES "^Linnet" OR NOT type MATCHES "LIBRARY$")
      continue()
    endif()
    if(t MATCHES "^obj\\.")
      continue()
    endif()
    get_target_property(deps ${t} LINK_LIBRARIES)
    if(NOT deps)
      set(deps "")
    endif()
    foreach(d ${deps})
      # Linnet libraries and the two LLVM/MLIR shared libraries; other
      # packages (fmt, json, dl) are not layers.
      if(d MATCHES "^(Linnet[A-Za-z]+|MLIR|LLVM)$")
        list(APPEND lines "${t} -> ${d}")
      endif()
    endforeach()
    list(APPEND lines "${t}")
  endforeach()
  list(REMOVE_DUPLICATES lines)
  list(SORT lines)
  string(REPLACE ";" "\n" text "${lines}")
  file(WRITE ${PROJECT_BINARY_DIR}/layers.txt "${text}\n")
endfunction()
