# Writes the bytes of INPUT as a C array (khub_pystub_data, khub_pystub_size) into OUTPUT.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR size "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}" "/* Generated from ${INPUT}; do not edit. */\n#include <stddef.h>\nconst unsigned char khub_pystub_data[] = {\n${bytes}\n};\nconst size_t khub_pystub_size = ${size};\n")
