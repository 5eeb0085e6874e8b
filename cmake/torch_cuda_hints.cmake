# Hints that let a CUDA build of torch's *Python wheel* configure as LibTorch.
#
# The wheel's CMake config (Caffe2/public/cuda.cmake) runs FindCUDA and needs
# the CUDA toolkit (nvcc, headers, cudart) plus libnvrtc. A toolkit install
# has the first; the wheel keeps nvrtc, NCCL and the other CUDA libraries in
# site-packages/nvidia/*, where FindCUDA does not look. Nothing here changes
# a CPU LibTorch's configuration: the variables are only read by a CUDA one.
#
# Sets (unless the user already did): CUDA_TOOLKIT_ROOT_DIR,
# CMAKE_CUDA_COMPILER, CUDA_nvrtc_LIBRARY; and TBD_TORCH_NVIDIA_DIRS, the
# wheel's nvidia/*/ folders, for NCCL's header and the linker's search path.

set(_tbd_torch_dirs "")
if(Torch_DIR)
  list(APPEND _tbd_torch_dirs "${Torch_DIR}/../../..")  # torch/share/cmake/Torch -> torch
endif()
foreach(_p IN LISTS CMAKE_PREFIX_PATH)
  list(APPEND _tbd_torch_dirs "${_p}/../..")            # torch/share/cmake -> torch
endforeach()

set(TBD_TORCH_NVIDIA_DIRS "")
foreach(_t IN LISTS _tbd_torch_dirs)
  get_filename_component(_site "${_t}/.." ABSOLUTE)
  if(IS_DIRECTORY "${_site}/nvidia")
    file(GLOB _dirs LIST_DIRECTORIES true "${_site}/nvidia/*")
    list(APPEND TBD_TORCH_NVIDIA_DIRS ${_dirs})
  endif()
endforeach()

if(NOT DEFINED CUDA_TOOLKIT_ROOT_DIR)
  if(DEFINED ENV{CUDA_HOME} AND EXISTS "$ENV{CUDA_HOME}/bin/nvcc")
    set(CUDA_TOOLKIT_ROOT_DIR "$ENV{CUDA_HOME}")
  elseif(EXISTS "/usr/local/cuda/bin/nvcc")
    set(CUDA_TOOLKIT_ROOT_DIR "/usr/local/cuda")
  endif()
endif()
if(CUDA_TOOLKIT_ROOT_DIR AND NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS "${CUDA_TOOLKIT_ROOT_DIR}/bin/nvcc")
  set(CMAKE_CUDA_COMPILER "${CUDA_TOOLKIT_ROOT_DIR}/bin/nvcc")
endif()

if(NOT CUDA_nvrtc_LIBRARY AND TBD_TORCH_NVIDIA_DIRS)
  set(_globs "")
  foreach(_d IN LISTS TBD_TORCH_NVIDIA_DIRS)
    list(APPEND _globs "${_d}/lib/libnvrtc.so*")
  endforeach()
  file(GLOB _nvrtc ${_globs})
  list(FILTER _nvrtc EXCLUDE REGEX "builtins|\\.alt\\.")
  if(_nvrtc)
    list(GET _nvrtc 0 _nvrtc)
    set(CUDA_nvrtc_LIBRARY "${_nvrtc}" CACHE FILEPATH "libnvrtc (from torch's nvidia wheels)")
  endif()
endif()

# cuda.cmake enables the CUDA language with the C++ standard; CMake before
# 3.26 has no CUDA20 dialect for nvcc. tbd compiles no .cu file, so the CUDA
# dialect only has to exist.
if(NOT DEFINED CMAKE_CUDA_STANDARD)
  set(CMAKE_CUDA_STANDARD 17)
endif()
