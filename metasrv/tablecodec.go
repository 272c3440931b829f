package metasrv

// TableCodecProperty is the table property that chooses the compression
// of the Parquet files the gateway writes for the table: "zstd" (the
// default when it is absent), "snappy" or "uncompressed". metasrv checks
// the value when a table is created or the property set, and hands it to
// the gateway in the table's descriptor (TableDescriptor.Codec); the
// gateway refuses to write with any other value (fail closed).
const TableCodecProperty = "parquet.compression"

// checkTableCodec validates TableCodecProperty in a table's properties.
func checkTableCodec(props map[string]string) error {
	v, ok := props[TableCodecProperty]
	if !ok {
		return nil
	}
	switch v {
	case "zstd", "snappy", "uncompressed":
		return nil
	}
	return badRequest("property %s must be \"zstd\", \"snappy\" or \"uncompressed\"", TableCodecProperty)
}
