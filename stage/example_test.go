package stage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"lakegate/localstack/standin"
	"lakegate/stage"
)

// A program holding its own storage credentials opens the child stage the
// gateway's lakegate.stage.describe action returned, and reads and writes
// objects with the same containment checks the gateway applies.
func Example() {
	ctx := context.Background()
	srv, err := standin.Start(ctx, standin.Config{Buckets: []string{"lake"}}) // stands in for S3
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	// What discovery returns: credential-free JSON for the caller's tenant.
	discovered := `{"version":1,"s3":{"bucket":"lake","prefix":"prod/tenants/acme",` +
		`"region":"us-east-1","endpoint":"` + srv.URL() + `","path_style":true}}`

	d, err := stage.ParseDescriptor([]byte(discovered))
	if err != nil {
		panic(err)
	}
	// The program's own credentials; the descriptor never carries any.
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	st, err := stage.Open(ctx, d, stage.Config{AWS: &cfg})
	if err != nil {
		panic(err)
	}
	defer st.Close()

	if _, err := st.Put(ctx, "uploads/2024/data.csv", strings.NewReader("id,name\n1,ada\n"), -1); err != nil {
		panic(err)
	}
	rc, info, err := st.Get(ctx, "uploads/2024/data.csv")
	if err != nil {
		panic(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	fmt.Printf("%d bytes: %q\n", info.Size, data)

	keys, _ := st.List(ctx, "uploads/", "", 0)
	fmt.Println(keys)

	// Immutable: no overwrite.
	_, err = st.Put(ctx, "uploads/2024/data.csv", strings.NewReader("x"), 1)
	fmt.Println(errors.Is(err, stage.ErrExists))

	// Whatever key it passes, it cannot leave its stage.
	for _, k := range []string{"../globex/secret.csv", "/prod/tenants/globex/secret.csv", "..%2Fglobex"} {
		_, _, err := st.Get(ctx, k)
		fmt.Println(err)
	}
	// Output:
	// 14 bytes: "id,name\n1,ada\n"
	// [uploads/2024/data.csv]
	// true
	// stage: get "../globex/secret.csv": stage: invalid key: segment starts with '.'
	// stage: get "/prod/tenants/globex/secret.csv": stage: invalid key: empty segment (leading, trailing or doubled '/')
	// stage: get "..%2Fglobex": stage: invalid key: byte 0x25 at offset 2 is outside [A-Za-z0-9._=-/]
}
