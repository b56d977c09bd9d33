# The one library an embedder links, and the installed package (README, "Embedding"):
# libloom.a and libloom.so, both made of every module's objects (all compiled position-
# independent), exported as loom::loom_static and loom::loom_shared with loom::loom choosing
# one (loomConfig.cmake); headers, loomConfig.cmake, loomConfigVersion.cmake, loom.pc and the
# `loom` command. In this build, loom::loom is the static library.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(modules GLOBAL PROPERTY LOOM_LIBRARY_MODULES)
set(objects "")
foreach(module IN LISTS modules)
  list(APPEND objects $<TARGET_OBJECTS:${module}>)
endforeach()

# What the modules link outside Loom: the library's own link interface.
set(external Threads::Threads Boost::json PkgConfig::SQLITE3 PkgConfig::SODIUM PkgConfig::ZSTD
             PkgConfig::TOMLPP PkgConfig::HTTPLIB PkgConfig::RE2 PkgConfig::LIBPQ)

foreach(kind IN ITEMS static shared)
  string(TOUPPER ${kind} KIND)
  add_library(loom_${kind} ${KIND} ${objects})
  set_target_properties(loom_${kind} PROPERTIES OUTPUT_NAME loom EXPORT_NAME loom_${kind}
                                                VERSION ${PROJECT_VERSION}
                                                SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  target_include_directories(loom_${kind} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                                 $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(loom_${kind} PUBLIC cxx_std_20)
  target_link_libraries(loom_${kind} PUBLIC Threads::Threads Boost::json PRIVATE ${external})
  add_library(loom::loom_${kind} ALIAS loom_${kind})
endforeach()
add_library(loom::loom ALIAS loom_static)

install(TARGETS loom_static loom_shared EXPORT loomTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS loom_command RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/loom DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(configDir ${CMAKE_INSTALL_LIBDIR}/cmake/loom)
install(EXPORT loomTargets NAMESPACE loom:: DESTINATION ${configDir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/loomConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/loomConfig.cmake INSTALL_DESTINATION ${configDir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/loomConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/loomConfig.cmake ${PROJECT_BINARY_DIR}/loomConfigVersion.cmake
        DESTINATION ${configDir})
# loom.pc names its prefix relative to its own folder, so any --prefix of cmake --install works.
file(RELATIVE_PATH LOOM_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/loom.pc.in ${PROJECT_BINARY_DIR}/loom.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/loom.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
