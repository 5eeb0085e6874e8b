# tbd's dependencies besides LibTorch. From the system (Debian package names
# in scripts/setup), or from a carried folder TBD_DEPS_DIR (scripts/gpu-bundle
# makes one) on machines that have a compiler and torch but nothing else, such
# as the GPU machine scripts/gpu-check runs on. The folder holds headers
# (include/), the two small shared libraries (lib/) and GoogleTest's sources;
# fmt comes from LibTorch's include folder there.

set(TBD_DEPS_DIR "" CACHE PATH "A folder made by scripts/gpu-bundle, used where the system lacks a dependency")
set(_hints "")
if(TBD_DEPS_DIR)
  set(_hints HINTS "${TBD_DEPS_DIR}/include" "${TBD_DEPS_DIR}/lib" NO_CMAKE_SYSTEM_PATH)
endif()

# A header-only library from the carried folder when it has one (its headers
# sit beside Gloo's, which every target of tbd_lib sees, so a second copy from
# the system would mix two versions of one library: nlohmann/json's ABI tags
# differ between releases and the link fails), else from the system's CMake
# package, else from the system's include folders.
function(tbd_header_only package target header)
  if(NOT (TBD_DEPS_DIR AND EXISTS "${TBD_DEPS_DIR}/include/${header}"))
    find_package(${package} QUIET)
    if(TARGET ${target})
      return()
    endif()
  endif()
  # LibTorch's include folder last: it ships fmt (newer than Debian's), which
  # its own headers expect.
  find_path(_dir_${package} ${header} HINTS "${TBD_DEPS_DIR}/include" ${TORCH_INCLUDE_DIRS})
  if(NOT _dir_${package})
    message(FATAL_ERROR "${package} not found: install it (scripts/setup does) or point TBD_DEPS_DIR at "
                        "a folder made by scripts/gpu-bundle")
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  target_include_directories(${target} SYSTEM INTERFACE "${_dir_${package}}")
  message(STATUS "${package}: headers from ${_dir_${package}}")
endfunction()

find_package(Threads REQUIRED)
tbd_header_only(CLI11 CLI11::CLI11 CLI/CLI.hpp)
tbd_header_only(nlohmann_json nlohmann_json::nlohmann_json nlohmann/json.hpp)
tbd_header_only(fmt fmt::fmt-header-only fmt/format.h)
if(NOT fmt_FOUND)
  set_property(TARGET fmt::fmt-header-only APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
endif()

# libjpeg-turbo's TurboJPEG API (Debian: libturbojpeg0-dev).
find_path(TURBOJPEG_INCLUDE_DIR turbojpeg.h ${_hints})
find_library(TURBOJPEG_LIBRARY NAMES turbojpeg libturbojpeg.so.0 ${_hints})
if(NOT TURBOJPEG_INCLUDE_DIR OR NOT TURBOJPEG_LIBRARY)
  message(FATAL_ERROR "libjpeg-turbo (TurboJPEG) not found: install libturbojpeg0-dev (scripts/setup does)")
endif()
add_library(tbd_turbojpeg INTERFACE)
target_include_directories(tbd_turbojpeg SYSTEM INTERFACE ${TURBOJPEG_INCLUDE_DIR})
target_link_libraries(tbd_turbojpeg INTERFACE ${TURBOJPEG_LIBRARY})

# Pascal VOC annotations are XML (Debian: libpugixml-dev).
find_package(pugixml QUIET)
if(NOT TARGET pugixml::pugixml)
  find_path(PUGIXML_INCLUDE_DIR pugixml.hpp ${_hints})
  find_library(PUGIXML_LIBRARY NAMES pugixml libpugixml.so.1 ${_hints})
  if(NOT PUGIXML_INCLUDE_DIR OR NOT PUGIXML_LIBRARY)
    message(FATAL_ERROR "pugixml not found: install libpugixml-dev (scripts/setup does)")
  endif()
  add_library(pugixml::pugixml INTERFACE IMPORTED GLOBAL)
  target_include_directories(pugixml::pugixml INTERFACE ${PUGIXML_INCLUDE_DIR})
  target_link_libraries(pugixml::pugixml INTERFACE ${PUGIXML_LIBRARY})
endif()

# Distributed runs use LibTorch's own ProcessGroupGloo, whose header needs
# Gloo's headers (LibTorch ships the library, not the headers). Without them
# the build still works; distributed runs then say what to install.
find_path(GLOO_INCLUDE_DIR gloo/algorithm.h HINTS "${TBD_DEPS_DIR}/include")

# Optional: without libsndfile the audio formats (FLAC/WAV) say so, the build goes on.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(SNDFILE IMPORTED_TARGET sndfile)
endif()

# GoogleTest: the system's, else built from the carried sources.
if(TBD_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT TARGET GTest::gtest_main AND EXISTS "${TBD_DEPS_DIR}/googletest/CMakeLists.txt")
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    add_subdirectory("${TBD_DEPS_DIR}/googletest" "${CMAKE_BINARY_DIR}/googletest" EXCLUDE_FROM_ALL)
    if(NOT TARGET GTest::gtest_main)  # GoogleTest 1.11+ defines them itself
      add_library(GTest::gtest ALIAS gtest)
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
  endif()
  if(NOT TARGET GTest::gtest_main)
    message(FATAL_ERROR "GoogleTest not found: install libgtest-dev (scripts/setup does), or configure "
                        "with -DTBD_BUILD_TESTS=OFF")
  endif()
endif()
