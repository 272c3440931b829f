// Package tablefiles gives the gateway's engine local access to the data
// files of committed table versions, and the Flight layer each tenant's
// child stage for writing them.
//
// For a local stage the engine reads files where they are, after each key
// passes the stage's containment check and is found to be a regular file
// (not a symlink) inside the tenant's directory. For an S3 stage, files are
// fetched through the stage client (the only holder of credentials) into a
// per-tenant cache under the engine's tenant directory, verified against
// their committed size and SHA-256, and pinned while a statement uses them.
//
// It never decides who may read what (the catalog does), never lets a key
// leave a tenant's child stage, and never hands the engine a path outside
// that tenant's directory.
package tablefiles
