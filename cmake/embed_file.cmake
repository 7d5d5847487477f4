# Writes OUT, a C++ file defining `std::string_view scalebench::NAME()` that returns the bytes of
# IN (a script the binary carries, so that it works from any folder and when installed):
#   cmake -DIN=tools/report.py -DOUT=report_script.cpp -DNAME=report_script -P cmake/embed_file.cmake
# The bytes go in as numbers: no string-literal length limit, no escaping.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
get_filename_component(name ${IN} NAME)
file(WRITE ${OUT}.tmp "// generated from ${name} by cmake/embed_file.cmake\n#include <string_view>\n\n"
  "namespace scalebench {\nnamespace {\nconst unsigned char kBytes[] = {${bytes}};\n}  // namespace\n\n"
  "std::string_view ${NAME}() { return {reinterpret_cast<const char*>(kBytes), sizeof kBytes}; }\n\n"
  "}  // namespace scalebench\n")
configure_file(${OUT}.tmp ${OUT} COPYONLY)
file(REMOVE ${OUT}.tmp)
