#ifndef C_TEST_KIT_START_H
#define C_TEST_KIT_START_H

// Nothing to call: the file beside this header starts the test kit when the test binary
// loads (see SubdeskTestKit/EngineObserver.swift).

#endif
