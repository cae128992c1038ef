# embed.cmake — writes a C source defining `const char *FUNC(void)` that
# returns the bytes of INPUT, so a text file (the seed study) ships inside the
# binary and cannot drift from the copy in the source tree.
# Usage: cmake -DINPUT=file -DOUTPUT=file.c -DFUNC=name -P embed.cmake
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n  " bytes "${bytes}")
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
  "/* Generated from ${name} by sweeps/embed.cmake at build time; do not edit. */\n"
  "#include \"swp.h\"\n\n"
  "static const char text[] = {\n  ${bytes}0x00};\n\n"
  "const char *${FUNC}(void) { return text; }\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
