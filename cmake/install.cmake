# `cmake --install build --prefix P` (issue #17): the public header, libattnvk.so
# (+ its SONAME links), libattnvk.a, the `attnvk` command, attnvkConfig.cmake with
# the imported targets attnvk::attnvk (shared) and attnvk::attnvk_static, and attnvk.pc.
# Everything the library runs is embedded in it: nothing is read from P at run time.
include(CMakePackageConfigHelpers)
set(ATTNVK_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/attnvk)

install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/attnvk/attnvk.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnvk)
install(TARGETS attnvk_shared EXPORT attnvkTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development)
install(FILES ${ATTNVK_STATIC_ARCHIVE} DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS attnvk RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT attnvkTargets NAMESPACE attnvk:: DESTINATION ${ATTNVK_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/attnvkConfig.cmake.in
  ${PROJECT_BINARY_DIR}/attnvkConfig.cmake INSTALL_DESTINATION ${ATTNVK_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_LIBDIR)
# 0.x: a new minor version may change the API, so only the same minor matches
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attnvkConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/attnvkConfig.cmake ${PROJECT_BINARY_DIR}/attnvkConfigVersion.cmake
  DESTINATION ${ATTNVK_CMAKE_DIR})

# attnvk.pc finds its prefix from its own place (${pcfiledir}), so the tree can move.
file(RELATIVE_PATH ATTNVK_PC_TO_PREFIX /P/${CMAKE_INSTALL_LIBDIR}/pkgconfig /P)
set(ATTNVK_PC_LIBS_PRIVATE "${CMAKE_THREAD_LIBS_INIT} -lm")
foreach(l ${CMAKE_DL_LIBS})
  string(APPEND ATTNVK_PC_LIBS_PRIVATE " -l${l}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/attnvk.pc.in ${PROJECT_BINARY_DIR}/attnvk.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/attnvk.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# python/ (the attnvk package), for `pip install PREFIX/share/attnvk/python`: its
# install-location.txt gives setup.py the library's path relative to that folder.
file(RELATIVE_PATH ATTNVK_PY_TO_LIB /P/${CMAKE_INSTALL_DATADIR}/attnvk/python /P/${CMAKE_INSTALL_LIBDIR}/libattnvk.so.0)
file(WRITE ${PROJECT_BINARY_DIR}/python-install-location.txt "${ATTNVK_PY_TO_LIB}\n")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/ DESTINATION ${CMAKE_INSTALL_DATADIR}/attnvk/python
  PATTERN build EXCLUDE PATTERN *.egg-info EXCLUDE PATTERN __pycache__ EXCLUDE PATTERN .gitignore EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/python-install-location.txt
  DESTINATION ${CMAKE_INSTALL_DATADIR}/attnvk/python RENAME install-location.txt)

# `cpack -G DEB` in the build folder: a Debian package of the same tree
set(CPACK_PACKAGE_NAME attnvk)
set(CPACK_PACKAGE_VENDOR attnvk)
set(CPACK_PACKAGE_CONTACT "attnvk maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Portable flash attention over Vulkan, OpenCL, CUDA and HIP")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
include(CPack)
