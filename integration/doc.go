// Package integration holds lakegate's end-to-end tests. They build the real
// lakegate binary, start it as a separate process on 127.0.0.1:0 with its
// own data directory, and talk to it with the real ADBC Flight SQL driver and
// arrow-go's Flight client — no mocks between the client and the engine.
//
// The package has no non-test code besides this file.
package integration
