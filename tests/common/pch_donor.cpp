// Empty: the object library test_pch exists to precompile the header every
// test target reuses (tests/CMakeLists.txt).
