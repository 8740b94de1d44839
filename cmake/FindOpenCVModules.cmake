# OpenCV's core, imgproc and imgcodecs without OpenCVConfig.cmake. Debian ships that file in
# libopencv-dev, which depends on every OpenCV module and so pulls VTK, GDAL, HDF5, x265 and about
# 250 other packages KernelLab never links; the per-module packages (libopencv-core-dev,
# libopencv-imgproc-dev, libopencv-imgcodecs-dev) have the headers and libraries, found here.
# Provides the targets OpenCV's own config would (opencv_core, opencv_imgproc, opencv_imgcodecs),
# OpenCVModules_FOUND, OpenCV_INCLUDE_DIRS and OpenCV_VERSION.
find_path(OpenCV_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4)
# cvconfig.h, which the headers include, sits in the architecture's include directory.
find_path(OpenCV_ARCH_INCLUDE_DIR opencv2/cvconfig.h
  HINTS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE} PATH_SUFFIXES opencv4)
set(OpenCV_INCLUDE_DIRS ${OpenCV_INCLUDE_DIR} ${OpenCV_ARCH_INCLUDE_DIR})
if(OpenCV_INCLUDE_DIR)
  file(STRINGS ${OpenCV_INCLUDE_DIR}/opencv2/core/version.hpp kl_opencv_version_lines
    REGEX "#define CV_VERSION_(MAJOR|MINOR|REVISION) +[0-9]+")
  foreach(part MAJOR MINOR REVISION)
    string(REGEX REPLACE ".*CV_VERSION_${part} +([0-9]+).*" "\\1" OpenCV_VERSION_${part} "${kl_opencv_version_lines}")
  endforeach()
  set(OpenCV_VERSION ${OpenCV_VERSION_MAJOR}.${OpenCV_VERSION_MINOR}.${OpenCV_VERSION_REVISION})
endif()
set(kl_opencv_libraries)
foreach(module core imgproc imgcodecs)
  find_library(OpenCV_${module}_LIBRARY opencv_${module})
  list(APPEND kl_opencv_libraries OpenCV_${module}_LIBRARY)
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenCVModules
  REQUIRED_VARS OpenCV_INCLUDE_DIR OpenCV_ARCH_INCLUDE_DIR ${kl_opencv_libraries}
  VERSION_VAR OpenCV_VERSION)
if(OpenCVModules_FOUND)
  foreach(module core imgproc imgcodecs)
    if(NOT TARGET opencv_${module})
      add_library(opencv_${module} SHARED IMPORTED)
      set_target_properties(opencv_${module} PROPERTIES
        IMPORTED_LOCATION ${OpenCV_${module}_LIBRARY}
        INTERFACE_INCLUDE_DIRECTORIES "${OpenCV_INCLUDE_DIRS}")
    endif()
  endforeach()
endif()
