// The translation unit that builds linnet's precompiled header
// (cmake/LinnetPch.cmake); it defines nothing.
