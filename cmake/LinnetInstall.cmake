# `cmake --install`: the tools (linnet, linnet-opt, linnet-translate), the runtime as a shared
# library exporting the C API only (liblinnet_runtime.so), the C header
# (include/linnet-c/Runtime.h), the standard library and the target files,
# a CMake package (find_package(linnet) -> linnet::runtime) and a
# pkg-config file (linnet.pc). test/Install/install.test checks all of it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The runtime's static libraries go into a shared one.
set_target_properties(LinnetRuntime LinnetSupport LinnetCudaRuntime PROPERTIES POSITION_INDEPENDENT_CODE ON)
add_library(linnet_runtime SHARED ${CMAKE_CURRENT_LIST_DIR}/install/runtime-shared.c)
target_link_libraries(linnet_runtime PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,LinnetRuntime>")
# The device backends (CUDA artifacts), registered when the library loads.
target_sources(linnet_runtime PRIVATE ${CMAKE_CURRENT_LIST_DIR}/install/runtime-backends.cpp)
# (by file: the runtime is already linked in whole, and linking the backend
# as a target would link the runtime a second time)
add_dependencies(linnet_runtime LinnetCudaRuntime LinnetCudaDriver)
target_include_directories(linnet_runtime PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(linnet_runtime PRIVATE $<TARGET_FILE:LinnetCudaRuntime> $<TARGET_FILE:LinnetCudaDriver>)
# Distributed artifacts (linnet_model_call_distributed), where MPI was found.
if(LINNET_HAS_MPI)
  add_dependencies(linnet_runtime LinnetDistributed)
  target_link_libraries(linnet_runtime PRIVATE $<TARGET_FILE:LinnetDistributed> ${LINNET_MPI_C_LIBRARIES})
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/install/runtime-backends.cpp PROPERTIES
    COMPILE_DEFINITIONS LINNET_HAS_MPI=1)
endif()
# Only linnet_* is exported: the C++ inside (and the libraries it links) stay private.
target_link_options(linnet_runtime PRIVATE
  "LINKER:--version-script=${CMAKE_CURRENT_LIST_DIR}/install/runtime.map")
# A sanitized build leaves the sanitizer (and coverage) runtime to the
# executable: its shared library has undefined references by design.
if(NOT LINNET_SANITIZE AND NOT LINNET_ENABLE_FUZZ)
  target_link_options(linnet_runtime PRIVATE "LINKER:--no-undefined")
endif()
set_target_properties(linnet_runtime PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/install/runtime.map
  EXPORT_NAME runtime)
target_include_directories(linnet_runtime INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# Installed binaries find LLVM's and MLIR's shared libraries where Debian
# keeps them (not on the default search path).
set_target_properties(linnet linnet-opt linnet-translate linnet_runtime PROPERTIES INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
install(TARGETS linnet linnet-opt linnet-translate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
install(TARGETS linnet_runtime EXPORT linnetTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/include/linnet-c/Runtime.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/linnet-c COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/std DESTINATION ${CMAKE_INSTALL_DATADIR}/linnet COMPONENT tools)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/targets DESTINATION ${CMAKE_INSTALL_DATADIR}/linnet COMPONENT tools)

# The same data staged into <build>/share/linnet at build time: the tools
# find it from their own directory (support::dataDir: <bin>/../share/linnet)
# in the build tree as in an installed one, never in the source checkout.
file(GLOB_RECURSE LINNET_DATA_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/lib/std/*.ln ${PROJECT_SOURCE_DIR}/docs/targets/*.json)
set(LINNET_DATA_STAGED)
foreach(src ${LINNET_DATA_SOURCES})
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${src})
  string(REGEX REPLACE "^(lib|docs)/" "" rel "${rel}")
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/share/linnet/${rel}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${src} ${PROJECT_BINARY_DIR}/share/linnet/${rel}
    DEPENDS ${src} COMMENT "Staging share/linnet/${rel}")
  list(APPEND LINNET_DATA_STAGED ${PROJECT_BINARY_DIR}/share/linnet/${rel})
endforeach()
add_custom_target(linnet_data ALL DEPENDS ${LINNET_DATA_STAGED})
add_dependencies(linnet linnet_data)

set(LINNET_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/linnet)
install(EXPORT linnetTargets NAMESPACE linnet:: DESTINATION ${LINNET_CMAKE_DIR} COMPONENT runtime)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/install/linnetConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/linnetConfig.cmake INSTALL_DESTINATION ${LINNET_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/linnetConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/linnetConfig.cmake ${PROJECT_BINARY_DIR}/cmake/linnetConfigVersion.cmake
  DESTINATION ${LINNET_CMAKE_DIR} COMPONENT runtime)

# pkg-config: prefix-relative, so the installed tree can be moved.
configure_file(${CMAKE_CURRENT_LIST_DIR}/install/linnet.pc.in ${PROJECT_BINARY_DIR}/cmake/linnet.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/linnet.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT runtime)

# A Debian package of the tools, the runtime and the data (`cd build && cpack
# -G DEB -B packages`; test/Install/package.test): everything under /usr, the
# LLVM/MLIR 19 and OpenMP libraries the tools and the code they generate
# load, and the C compiler driver that links an artifact's library.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "linnet")
set(CPACK_PACKAGE_VENDOR "linnet")
set(CPACK_PACKAGE_CONTACT "linnet developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "An ahead-of-time compiler for neural-network models and graph computations")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
  OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_COMPONENTS_ALL tools runtime)
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE "amd64")
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libmlir-19, libllvm19, libomp5-19, gcc")
# The MPI executor (linnet run --ranks, linnet_model_call_distributed) links
# OpenMPI's library where the build found it.
if(LINNET_HAS_MPI)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libopenmpi3")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenblas0")
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
include(CPack)
