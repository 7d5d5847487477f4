#pragma once
// The environment variables scalebench honours and the command line it was started with.
#include <string>
#include <vector>

namespace scalebench {

// Every environment variable scalebench reads, declared once with its default and meaning.
struct EnvVar {
  const char* name;
  const char* default_value;
  const char* meaning;
};
const std::vector<EnvVar>& honoured_env_vars();
std::string env_vars_help();  // a block of text for --help

// The command line as given (set once by main).
void set_command_line(int argc, char** argv);
const std::vector<std::string>& command_line();

}  // namespace scalebench
