// The precompiled header every test program reuses (cmake/ScalebenchTest.cmake): this file only
// gives the target that builds it a source.
