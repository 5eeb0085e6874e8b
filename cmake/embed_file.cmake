# Turns a file into a C++ source defining its bytes, so the binary carries it
# (cmake -DINPUT=file -DOUTPUT=out.cpp -DSYMBOL=name -P embed_file.cmake).
# Defines `extern const unsigned char tbd_asset_<SYMBOL>[]` (NUL-terminated)
# and `extern const std::size_t tbd_asset_<SYMBOL>_size` (without the NUL).
# A byte array rather than a string literal: no length limit, no escaping.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REPEAT "0x..," 24 row)  # CMake's regex has no {n}
string(REGEX REPLACE "(${row})" "\\1\n" bytes "${bytes}")
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${name} by cmake/embed_file.cmake; do not edit.\n"
  "#include <cstddef>\n"
  "extern const unsigned char tbd_asset_${SYMBOL}[] = {\n${bytes}0x00};\n"
  "extern const std::size_t tbd_asset_${SYMBOL}_size = ${size};\n")
# Rewritten only when it changes, so an unchanged asset recompiles nothing.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
