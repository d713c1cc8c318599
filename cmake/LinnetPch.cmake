# Precompiled headers: much of the build's time goes to parsing MLIR's headers
# (measured: a pass that takes 29 s of CPU to compile takes 14 s with the
# header precompiled, GCC -O3; 47 s -> 27 s with clang -O0 + sanitizers). One
# precompiled header, cmake/linnet_pch.h, is built once per flavour of flags
# and reused by the sources that use MLIR (the others lose about as much
# loading it as they would gain). Targets whose flags differ in what clang
# checks (position-independent code, a sanitizer of their own) compile
# without it. Its headers come first in every source that uses it; sources
# still include what they use.
option(LINNET_PCH "Precompile the MLIR, LLVM and JSON headers most sources include" ON)

function(linnet_use_precompiled_headers)
  if(NOT LINNET_PCH)
    return()
  endif()
  # Two flavours: linnet_add_library's flags, and the flags LLVM's CMake gives
  # add_mlir_library targets (-fno-exceptions, which a precompiled header must
  # match).
  # LLVM's headers make every object that includes them refer to a symbol of
  # libLLVM (its ABI check); a target that links no LLVM must not.
  set(pch_defines FMT_SHARED LLVM_DISABLE_ABI_BREAKING_CHECKS_ENFORCING=1)
  foreach(pch linnet_pch linnet_pch_llvm)
    add_library(${pch} OBJECT ${PROJECT_SOURCE_DIR}/cmake/linnet_pch.cpp)
    target_precompile_headers(${pch} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:${PROJECT_SOURCE_DIR}/cmake/linnet_pch.h>)
    # GCC uses a precompiled header only where every macro its headers read is
    # defined alike: pch_defines and fmt's FMT_SHARED go to every user.
    target_link_libraries(${pch} PRIVATE fmt::fmt nlohmann_json::nlohmann_json)
    target_compile_definitions(${pch} PRIVATE ${pch_defines})
  endforeach()
  llvm_update_compile_flags(linnet_pch_llvm)
  linnet_collect_targets(${PROJECT_SOURCE_DIR} targets)  # LinnetLayers.cmake
  foreach(t ${targets})
    if(t MATCHES "^linnet_pch")
      continue()
    endif()
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    # Position-independent code, a target's own sanitizer (the fuzzers'
    # -fsanitize=fuzzer) and its own optimization level
    # (linnet_optimize_when_sanitized) are flags clang holds a precompiled
    # header to.
    get_target_property(pic ${t} POSITION_INDEPENDENT_CODE)
    get_target_property(options ${t} COMPILE_OPTIONS)
    if(pic OR options MATCHES "-fsanitize|-O[0-9]")
      continue()
    endif()
    # Only sources that use MLIR gain: loading the header costs a source
    # that does not about as much as it saves one that does.
    get_target_property(sources ${t} SOURCES)
    get_target_property(dir ${t} SOURCE_DIR)
    set(uses_mlir "")
    set(others "")
    foreach(src ${sources})
      if(NOT src MATCHES "\\.cpp$")
        continue()
      endif()
      cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${dir} OUTPUT_VARIABLE path)
      file(READ ${path} text)
      if(text MATCHES "#include [\"<]mlir/|mlir::")
        list(APPEND uses_mlir ${src})
      else()
        list(APPEND others ${src})
      endif()
    endforeach()
    if(NOT uses_mlir)
      continue()
    endif()
    if(others)
      set_source_files_properties(${others} TARGET_DIRECTORY ${t}
        PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
    get_target_property(flags ${t} COMPILE_FLAGS)
    if(flags MATCHES "-fno-exceptions")
      target_precompile_headers(${t} REUSE_FROM linnet_pch_llvm)
    else()
      target_precompile_headers(${t} REUSE_FROM linnet_pch)
    endif()
    target_compile_definitions(${t} PRIVATE ${pch_defines})
  endforeach()
endfunction()
