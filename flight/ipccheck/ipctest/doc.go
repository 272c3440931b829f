// Package ipctest builds Arrow IPC streams for tests of code that reads
// them from outside: honest ones, and the hostile ones that made arrow-go's
// reader allocate beyond memory (see flight/ipccheck). Tests only.
package ipctest
