# Install rules and the exported package: find_package(khub CONFIG) then link khub::hub etc.
include(CMakePackageConfigHelpers)
get_property(_khub_targets GLOBAL PROPERTY KHUB_EXPORTED_TARGETS)
install(TARGETS ${_khub_targets} EXPORT khubTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT khubTargets NAMESPACE khub:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/khub)
# The build tree is a usable package too, so examples build against build/ without installing.
export(EXPORT khubTargets NAMESPACE khub:: FILE ${PROJECT_BINARY_DIR}/khubTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/khubConfig.cmake.in
  ${PROJECT_BINARY_DIR}/khubConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/khub)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/khubConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/khubConfig.cmake ${PROJECT_BINARY_DIR}/khubConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/KhubTorchLinkPath.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/khub)
