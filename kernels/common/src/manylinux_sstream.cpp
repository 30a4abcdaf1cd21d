// Explicit instantiations of the string streams the tvm-ffi headers use (TVM_FFI_THROW's ErrorBuilder, ...),
// compiled into each tvm-ffi module. libstdc++ declares these templates `extern`, so without this the module
// would import their members from libstdc++.so, and gcc >= 9 headers reach members added after GCC 8
// (basic_ostringstream() @GLIBCXX_3.4.26, basic_stringbuf::str() const& @GLIBCXX_3.4.29), which
// manylinux_2_28 does not allow. With the members defined here the references bind inside the module: it
// imports no GLIBCXX version newer than 3.4.25, as torch variants achieve by linking libc10 first.
#include <sstream>

template class std::basic_stringbuf<char>;
template class std::basic_ostringstream<char>;
template class std::basic_istringstream<char>;
template class std::basic_stringstream<char>;
