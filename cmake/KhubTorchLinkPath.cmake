# libtorch_cuda needs the wheel's own NCCL, cuBLAS, … (found at run time through its $ORIGIN RUNPATH);
# at link time an older system copy (e.g. /usr/local/cuda/lib/libnccl.so.2) can shadow them, so
# everything that links torch searches the wheel's nvidia/*/lib first. Used by khub's build and by
# khubConfig.cmake for applications.
macro(khub_prefer_wheel_cuda_libs)
  if(TARGET torch AND TORCH_INSTALL_PREFIX)
    file(GLOB _khub_torch_nvidia_libs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
    foreach(_khub_dir ${_khub_torch_nvidia_libs})
      set_property(TARGET torch APPEND PROPERTY INTERFACE_LINK_OPTIONS "LINKER:-rpath-link,${_khub_dir}")
    endforeach()
  endif()
endmacro()
