// Package ipccheck checks the metadata of the Arrow IPC messages a client
// sends before arrow-go parses them.
//
// arrow-go's IPC reader sizes slices from the vector lengths it reads in a
// message's flatbuffer metadata before it reads the elements, and trusts the
// lengths. A schema message of a few hundred bytes that claims hundreds of
// millions of fields makes it allocate tens of gigabytes, and the Go runtime
// ends the process when an allocation fails: no recover() helps. Message
// walks the metadata the way the reader will (the message, its schema,
// dictionary batch or record batch, every field, type, dictionary encoding
// and key-value pair), checking that every table, vector and string lies
// inside the buffer, that no table is reached twice and that schemas stay
// within MaxFields and MaxDepth, so that what the reader builds is bounded
// by the message's size. FlightData and Stream also see the bodies, and
// hold what a compressed batch's buffers announce they decompress to (the
// reader allocates that before decompressing) to MaxDecompressedBytes.
//
// What it must never do: allocate in proportion to a length it has not
// checked against the buffer, or panic on any input.
package ipccheck
