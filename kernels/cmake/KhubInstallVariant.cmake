# cmake -DSTAGE=<dir> -DDEST=<variant dir> -DSO=<module> -DPYDIR=<torch-ext/<pkg>> -P KhubInstallVariant.cmake
# Lays out one variant dir from scratch: package files, _ops.py, metadata.json, the native module.
# Stale files (old ids, __pycache__) disappear because the dir is rebuilt every time.
file(REMOVE_RECURSE ${DEST})
file(MAKE_DIRECTORY ${DEST})
file(GLOB_RECURSE pyfiles RELATIVE ${PYDIR} ${PYDIR}/*)
foreach(f ${pyfiles})
  if(f MATCHES "(__pycache__|\\.pyc$|\\.pyi$)")
    continue()
  endif()
  get_filename_component(d ${DEST}/${f} DIRECTORY)
  file(COPY ${PYDIR}/${f} DESTINATION ${d})
endforeach()
file(COPY ${STAGE}/_ops.py ${STAGE}/metadata.json ${SO} DESTINATION ${DEST})
