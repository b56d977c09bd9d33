# Writes OUTPUT, a C++ file defining `const std::string_view NAME` in namespace NAMESPACE with
# the text of INPUT (a web page shipped inside the binary). Run as `cmake -P` by a custom
# command, so the page is embedded again whenever it changes.
file(READ "${INPUT}" text)
string(FIND "${text}" ")loomembed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )loomembed\"")
endif()
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by cmake/EmbedText.cmake; do not edit.\n"
                       "#include <string_view>\n"
                       "namespace ${NAMESPACE} {\n"
                       "extern const std::string_view ${NAME};\n"
                       "const std::string_view ${NAME} = R\"loomembed(${text})loomembed\";\n"
                       "}\n")
