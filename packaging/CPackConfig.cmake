# Install rules and CPack (.deb, .tar.gz) for both executables, the package
# runtime library, the desktop entry, the icon and the man pages.
# Included at the end of the top-level CMakeLists.txt.
include(GNUInstallDirs)

# Installed binaries find CUDA's libraries (NVRTC) without LD_LIBRARY_PATH.
set(TESSERA_INSTALL_RPATH "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR};/usr/local/cuda/lib64")
set(_tessera_programs tessera)
if(TARGET tessera-studio)
  list(APPEND _tessera_programs tessera-studio)
endif()
set_target_properties(${_tessera_programs} PROPERTIES INSTALL_RPATH "${TESSERA_INSTALL_RPATH}")
install(TARGETS ${_tessera_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(FILES ${PROJECT_SOURCE_DIR}/packaging/tessera.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
if(TARGET tessera-studio)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/tessera-studio.1
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/tessera-studio.desktop
          DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/tessera-studio.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/resources/models/small_cnn.onnx
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tessera/examples OPTIONAL)

set(CPACK_PACKAGE_NAME "tessera")
set(CPACK_PACKAGE_VENDOR "Tessera")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Deep-learning compiler with a desktop studio: ONNX to loop IR to LLVM/CUDA")
set(CPACK_PACKAGE_CONTACT "Tessera developers <tessera@example.org>")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://example.org/tessera")
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tessera_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
# Listed by hand: dpkg-shlibdeps cannot resolve CUDA's libraries (not Debian packages).
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6, libstdc++6, libgcc-s1, libgomp1, libllvm19, libprotobuf32, libonnx1")
if(TARGET tessera-studio)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS
         ", libqt6core6, libqt6gui6, libqt6widgets6, libqt6printsupport6, libqt6svg6,"
         " libqcustomplot2.1-qt6, libgvc6, libcgraph6")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libonnx-testdata")
set(CPACK_SOURCE_GENERATOR "TGZ")
set(CPACK_SOURCE_IGNORE_FILES "/build.*/" "/\\\\.git/")
include(CPack)

# `cpack` works from a build folder: make the .tar.gz into a scratch folder and
# check its listing (label "packaging"; about 3 s).
if(TESSERA_BUILD_TESTS)
  add_test(NAME packaging_cpack_tgz
           COMMAND ${CMAKE_CPACK_COMMAND} -G TGZ -B ${PROJECT_BINARY_DIR}/cpack-test
           WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
  set_tests_properties(packaging_cpack_tgz PROPERTIES LABELS packaging
    PASS_REGULAR_EXPRESSION "tessera-${PROJECT_VERSION}-Linux\\.tar\\.gz generated")
endif()
