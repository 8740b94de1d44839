# Every dependency, found up front; a missing one names the Debian package to install.

macro(kl_require found_var what debian_package)
  if(NOT ${found_var})
    message(FATAL_ERROR "${what} not found: install it with `apt-get install ${debian_package}` "
                        "(or run scripts/setup-debian.sh, which installs everything KernelLab needs).")
  endif()
endmacro()

find_package(Qt6 6.4 QUIET COMPONENTS Core Gui Widgets Charts Concurrent Test)
kl_require(Qt6_FOUND "Qt 6 (Core Gui Widgets Concurrent Test)" "qt6-base-dev")
kl_require(Qt6Charts_FOUND "Qt 6 Charts" "qt6-charts-dev")

# OpenCV's own config where libopencv-dev is installed; else the three modules' packages alone
# (cmake/FindOpenCVModules.cmake says why).
find_package(OpenCV 4 QUIET COMPONENTS core imgproc imgcodecs)
if(NOT OpenCV_FOUND)
  find_package(OpenCVModules 4 QUIET)
  set(OpenCV_FOUND ${OpenCVModules_FOUND})
endif()
kl_require(OpenCV_FOUND "OpenCV 4 (core imgproc imgcodecs)"
           "libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev")

find_package(SndFile QUIET)
kl_require(SndFile_FOUND "libsndfile" "libsndfile1-dev")

find_package(CUDAToolkit 12 QUIET)
kl_require(CUDAToolkit_FOUND "CUDA toolkit (runtime, cuFFT, NVTX3)" "the CUDA toolkit in /usr/local/cuda")
if(NOT TARGET CUDA::nvtx3)
  message(FATAL_ERROR "CUDA toolkit at ${CUDAToolkit_BIN_DIR} has no NVTX3 headers; install the full CUDA toolkit.")
endif()
