// RunCli: runs one `tracetable` subcommand in process (cli/common.h), with its
// standard output captured, for tests of what the command answers.
#ifndef TRACETABLE_TESTS_RUN_CLI_H_
#define TRACETABLE_TESTS_RUN_CLI_H_

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace tracetable {

inline int RunCli(int (*main)(int, char**), std::vector<std::string> args, std::string* out = nullptr) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  const int rc = main(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old);
  if (out) *out = captured.str();
  return rc;
}

}  // namespace tracetable

#endif  // TRACETABLE_TESTS_RUN_CLI_H_
