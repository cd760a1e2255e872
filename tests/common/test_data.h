// Where tests find the shared reference data (../shared: models + golden).
//
// KAZEIA_TEST_DATA overrides the default (the folder `shared` beside the
// checkout). Tests that need it call KZ_REQUIRE_SHARED_DATA(), which skips
// loudly when it is absent: the suite must still pass on generated models.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace kazeia::testing {

inline std::string shared_data_dir() {
  if (const char* env = std::getenv("KAZEIA_TEST_DATA"); env && *env) return env;
  return std::string(KAZEIA_SOURCE_DIR "/../shared");
}

inline bool shared_data_available() {
  return std::filesystem::exists(shared_data_dir() + "/models/README.md");
}

inline std::string shared_model(const std::string& name) { return shared_data_dir() + "/models/" + name; }
inline std::string shared_golden(const std::string& rel) { return shared_data_dir() + "/golden/" + rel; }

// A scratch directory for the test's own files, removed by nobody: it lives
// under the build tree's temp folder.
inline std::string scratch_dir() {
  auto dir = std::filesystem::temp_directory_path() / "kazeia-tests";
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace kazeia::testing

#define KZ_REQUIRE_SHARED_DATA()                                                              \
  do {                                                                                        \
    if (!::kazeia::testing::shared_data_available()) {                                        \
      std::fprintf(stderr, "\n*** SKIPPING: shared reference data not found at %s "           \
                           "(set KAZEIA_TEST_DATA) ***\n",                                    \
                   ::kazeia::testing::shared_data_dir().c_str());                             \
      GTEST_SKIP() << "shared reference data not found at " << ::kazeia::testing::shared_data_dir(); \
    }                                                                                         \
  } while (0)
