// Command lakegate runs the governed Flight SQL gateway and its tools.
//
//	lakegate serve      all-in-one gateway with the embedded engine and demo data
//	lakegate sql        run one query against a gateway and print the result
//	lakegate token new  print a new bearer token and the hash line for a principal map
//
// This package parses flags and wires packages together; it holds no
// decisions of its own.
package main
