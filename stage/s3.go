package stage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithy "github.com/aws/smithy-go"
)

// S3 tuning. PartSize is also the multipart threshold: objects up to
// PartSize bytes are written with one PutObject, larger ones in PartSize
// parts.
const (
	PartSize           = 16 << 20
	defaultMaxAttempts = 5
	defaultMaxBackoff  = 2 * time.Second
	abortTimeout       = 30 * time.Second
	metaSHA256         = "lakegate-sha256" // x-amz-meta-lakegate-sha256: hex SHA-256
)

// Config holds what a program brings to open a stage: credentials and
// transport. The local backend ignores it. The zero Config loads the AWS SDK
// default configuration (environment, shared files, instance roles).
type Config struct {
	// AWS is the SDK configuration carrying credentials and, optionally,
	// region and endpoint; nil means config.LoadDefaultConfig.
	AWS *aws.Config
	// HTTPClient overrides the SDK's HTTP client; nil keeps AWS's.
	HTTPClient aws.HTTPClient
	// MaxAttempts bounds the attempts per request (the SDK's standard
	// retryer with exponential backoff and jitter); 0 means 5.
	MaxAttempts int
	// MaxBackoff caps the delay between attempts; 0 means 2s.
	MaxBackoff time.Duration
}

// Open opens the stage d describes with the backend it names.
func Open(ctx context.Context, d Descriptor, c Config) (Store, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.Local != nil {
		return OpenLocal(d)
	}
	return OpenS3(ctx, d, c)
}

// Uploads is implemented by stores with multipart uploads (S3Store), for
// cleaning up uploads a crashed process left open.
type Uploads interface {
	// ListUploads lists the open multipart uploads whose keys start with
	// prefix (checked like List's prefix).
	ListUploads(ctx context.Context, prefix string) ([]Upload, error)
	// AbortUpload aborts an open upload; ErrNotFound if there is none with
	// that id for that key.
	AbortUpload(ctx context.Context, u Upload) error
}

// Upload is an open multipart upload.
type Upload struct {
	Key string // relative to the stage root
	ID  string // the upload id the server assigned
	// Initiated is when the upload started (zero when the server does not
	// say).
	Initiated time.Time
}

// S3Store is a Store under a key prefix of an S3 bucket. Every object key,
// list prefix, start-after key, copy source, delete-batch key and multipart
// call is checked with Descriptor.Key before a request is built; list
// continuation tokens come only from the server, never from callers.
//
// Put sends If-None-Match: * (and CompleteMultipartUpload and CopyObject
// send it too), so an object is never overwritten; a HEAD pre-check makes
// multipart uploads and copies fail fast against servers that ignore the
// condition. Objects over PartSize use multipart upload, aborted on any
// error or cancellation. Single-part puts send x-amz-checksum-sha256 and
// store the hex SHA-256 as x-amz-meta-lakegate-sha256; Get asks for
// checksum validation (ChecksumMode ENABLED) and verifies the stored SHA-256
// itself. Multipart parts each carry their SHA-256, which S3 verifies on
// upload; the whole-object SHA-256 of a multipart object is returned by Put
// (for the caller to record) but not stored with the object.
//
// An S3Store is safe for use from multiple goroutines.
type S3Store struct {
	d      Descriptor
	bucket string
	client *s3.Client
}

// OpenS3 opens an S3 stage. Credentials come from c.AWS or the SDK default
// chain, never from the descriptor. The endpoint is the descriptor's if
// set, else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL from the environment,
// else c.AWS's, else AWS. The region is the descriptor's, else c.AWS's,
// else us-east-1.
func OpenS3(ctx context.Context, d Descriptor, c Config) (*S3Store, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.S3 == nil {
		return nil, fmt.Errorf("%w: OpenS3 needs an s3 descriptor, got %s", ErrInvalidDescriptor, d)
	}
	var cfg aws.Config
	if c.AWS != nil {
		cfg = c.AWS.Copy()
	} else {
		var err error
		if cfg, err = config.LoadDefaultConfig(ctx); err != nil {
			return nil, fmt.Errorf("stage: open %s: %w", d, err)
		}
	}
	endpoint := d.S3.Endpoint
	for _, v := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		if e := os.Getenv(v); endpoint == "" && e != "" {
			endpoint = e
		}
	}
	region := d.S3.Region
	if region == "" {
		region = cfg.Region
	}
	if region == "" {
		region = "us-east-1"
	}
	attempts, backoff := c.MaxAttempts, c.MaxBackoff
	if attempts <= 0 {
		attempts = defaultMaxAttempts
	}
	if backoff <= 0 {
		backoff = defaultMaxBackoff
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.Region = region
		o.UsePathStyle = d.S3.PathStyle
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		if c.HTTPClient != nil {
			o.HTTPClient = c.HTTPClient
		}
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = attempts
			so.MaxBackoff = backoff
		})
		// Checksums are chosen explicitly per call (SHA-256), not by the
		// SDK's default CRC trailers.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &S3Store{d: d, bucket: d.S3.Bucket, client: client}, nil
}

// Descriptor implements Store.
func (s *S3Store) Descriptor() Descriptor { return s.d }

// Close implements Store.
func (s *S3Store) Close() error { return nil }

// rel maps a key the server returned back to a caller key, or reports false
// for anything outside the stage (a misbehaving server).
func (s *S3Store) rel(full string) (string, bool) {
	p := s.d.prefix() + "/"
	if !strings.HasPrefix(full, p) {
		return "", false
	}
	r := full[len(p):]
	if _, err := s.d.Key(r); err != nil {
		return "", false
	}
	return r, true
}

// s3Err maps SDK errors to the package sentinels where one applies.
func s3Err(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "PreconditionFailed":
			return fmt.Errorf("%w (%s)", ErrExists, ae.ErrorCode())
		case "NoSuchKey", "NotFound", "NoSuchUpload":
			return fmt.Errorf("%w (%s)", ErrNotFound, ae.ErrorCode())
		}
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusPreconditionFailed:
			return ErrExists
		case http.StatusNotFound:
			return ErrNotFound
		}
	}
	return err
}

func b64(sum []byte) *string { return aws.String(base64.StdEncoding.EncodeToString(sum)) }

// Put implements Store.
func (s *S3Store) Put(ctx context.Context, key string, r io.Reader, size int64) (Info, error) {
	full, err := s.d.Key(key)
	if err != nil {
		return Info{}, pathErr("put", key, err)
	}
	info, err := s.put(ctx, key, full, ctxReader{ctx, r}, size)
	if err != nil {
		return Info{}, pathErr("put", key, err)
	}
	return info, nil
}

func (s *S3Store) put(ctx context.Context, key, full string, r io.Reader, size int64) (Info, error) {
	var first bytes.Buffer
	if size >= 0 && size <= PartSize {
		first.Grow(int(size) + 1)
	}
	if _, err := first.ReadFrom(io.LimitReader(r, PartSize+1)); err != nil {
		return Info{}, err
	}
	if first.Len() <= PartSize {
		data := first.Bytes()
		if size >= 0 && int64(len(data)) != size {
			return Info{}, fmt.Errorf("%w: read %d bytes, want %d", ErrSize, len(data), size)
		}
		sum := sha256.Sum256(data)
		out, err := s.client.PutObject(ctx, &s3.PutObjectInput{
			Bucket:         &s.bucket,
			Key:            &full,
			Body:           bytes.NewReader(data),
			ContentLength:  aws.Int64(int64(len(data))),
			IfNoneMatch:    aws.String("*"),
			ChecksumSHA256: b64(sum[:]),
			Metadata:       map[string]string{metaSHA256: hex.EncodeToString(sum[:])},
		})
		if err != nil {
			return Info{}, s3Err(err)
		}
		return Info{Key: key, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), ETag: aws.ToString(out.ETag)}, nil
	}
	// Multipart: fail fast if the key exists (If-None-Match on Complete is
	// the real guard).
	if _, err := s.stat(ctx, key, full); err == nil {
		return Info{}, ErrExists
	} else if !errors.Is(err, ErrNotFound) {
		return Info{}, err
	}
	rest := io.MultiReader(bytes.NewReader(first.Bytes()[PartSize:]), r)
	return s.multipart(ctx, key, full, first.Bytes()[:PartSize], rest, size)
}

func (s *S3Store) multipart(ctx context.Context, key, full string, part []byte, rest io.Reader, size int64) (_ Info, err error) {
	cr, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket:            &s.bucket,
		Key:               &full,
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
	})
	if err != nil {
		return Info{}, s3Err(err)
	}
	defer func() {
		if err != nil {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
			defer cancel()
			if _, aerr := s.client.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{
				Bucket: &s.bucket, Key: &full, UploadId: cr.UploadId,
			}); aerr != nil {
				err = errors.Join(err, fmt.Errorf("abort multipart upload: %w", aerr))
			}
		}
	}()
	var (
		whole = sha256.New()
		total int64
		parts []types.CompletedPart
		buf   = make([]byte, PartSize)
	)
	for n := int32(1); len(part) > 0; n++ {
		sum := sha256.Sum256(part)
		whole.Write(part)
		total += int64(len(part))
		out, err := s.client.UploadPart(ctx, &s3.UploadPartInput{
			Bucket:         &s.bucket,
			Key:            &full,
			UploadId:       cr.UploadId,
			PartNumber:     aws.Int32(n),
			Body:           bytes.NewReader(part),
			ContentLength:  aws.Int64(int64(len(part))),
			ChecksumSHA256: b64(sum[:]),
		})
		if err != nil {
			return Info{}, s3Err(err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(n), ETag: out.ETag, ChecksumSHA256: b64(sum[:])})
		m, err := io.ReadFull(rest, buf)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return Info{}, err
		}
		part = buf[:m]
	}
	if size >= 0 && total != size {
		return Info{}, fmt.Errorf("%w: read %d bytes, want %d", ErrSize, total, size)
	}
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	out, err := s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket:          &s.bucket,
		Key:             &full,
		UploadId:        cr.UploadId,
		IfNoneMatch:     aws.String("*"),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		return Info{}, s3Err(err)
	}
	return Info{Key: key, Size: total, SHA256: hex.EncodeToString(whole.Sum(nil)), ETag: aws.ToString(out.ETag)}, nil
}

// Get implements Store.
func (s *S3Store) Get(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	full, err := s.d.Key(key)
	if err != nil {
		return nil, Info{}, pathErr("get", key, err)
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket:       &s.bucket,
		Key:          &full,
		ChecksumMode: types.ChecksumModeEnabled,
	})
	if err != nil {
		return nil, Info{}, pathErr("get", key, s3Err(err))
	}
	info := Info{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), SHA256: metaValue(out.Metadata, metaSHA256)}
	return &verifyReader{key: key, body: out.Body, want: info.SHA256, size: info.Size, h: sha256.New()}, info, nil
}

func metaValue(m map[string]string, k string) string {
	for mk, v := range m {
		if strings.EqualFold(mk, k) {
			return v
		}
	}
	return ""
}

// verifyReader checks length and, when known, the SHA-256 at EOF.
type verifyReader struct {
	key  string
	body io.ReadCloser
	want string
	size int64
	n    int64
	h    hash.Hash
}

func (v *verifyReader) Read(p []byte) (int, error) {
	n, err := v.body.Read(p)
	v.n += int64(n)
	v.h.Write(p[:n])
	if err == io.EOF {
		if v.n != v.size {
			return n, pathErr("get", v.key, fmt.Errorf("%w: read %d bytes, want %d", ErrChecksum, v.n, v.size))
		}
		if v.want != "" && hex.EncodeToString(v.h.Sum(nil)) != v.want {
			return n, pathErr("get", v.key, fmt.Errorf("%w: sha256 differs from the stored one", ErrChecksum))
		}
	} else if err != nil {
		err = pathErr("get", v.key, s3Err(err))
	}
	return n, err
}

func (v *verifyReader) Close() error { return v.body.Close() }

// Stat implements Store.
func (s *S3Store) Stat(ctx context.Context, key string) (Info, error) {
	full, err := s.d.Key(key)
	if err != nil {
		return Info{}, pathErr("stat", key, err)
	}
	info, err := s.stat(ctx, key, full)
	if err != nil {
		return Info{}, pathErr("stat", key, err)
	}
	return info, nil
}

func (s *S3Store) stat(ctx context.Context, key, full string) (Info, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &full})
	if err != nil {
		return Info{}, s3Err(err)
	}
	return Info{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), SHA256: metaValue(out.Metadata, metaSHA256),
		Modified: aws.ToTime(out.LastModified)}, nil
}

// List implements Store.
func (s *S3Store) List(ctx context.Context, prefix, startAfter string, limit int) ([]string, error) {
	fullPrefix, err := s.d.ListPrefix(prefix)
	if err != nil {
		return nil, pathErr("list", prefix, err)
	}
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &fullPrefix}
	if startAfter != "" {
		fullAfter, err := s.d.Key(startAfter)
		if err != nil {
			return nil, pathErr("list", startAfter, err)
		}
		in.StartAfter = &fullAfter
	}
	if limit <= 0 {
		limit = DefaultListLimit
	}
	var keys []string
	for len(keys) < limit {
		in.MaxKeys = aws.Int32(int32(min(limit-len(keys), 1000)))
		out, err := s.client.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, pathErr("list", prefix, s3Err(err))
		}
		for _, o := range out.Contents {
			if r, ok := s.rel(aws.ToString(o.Key)); ok && strings.HasPrefix(r, prefix) && len(keys) < limit {
				keys = append(keys, r)
			}
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			break
		}
		in.ContinuationToken = out.NextContinuationToken // from the server, not the caller
	}
	return keys, nil
}

// Delete implements Store.
func (s *S3Store) Delete(ctx context.Context, keys ...string) error {
	objs := make([]types.ObjectIdentifier, 0, len(keys))
	for _, k := range keys {
		full, err := s.d.Key(k)
		if err != nil {
			return pathErr("delete", k, err)
		}
		objs = append(objs, types.ObjectIdentifier{Key: aws.String(full)})
	}
	for len(objs) > 0 {
		batch := objs[:min(len(objs), 1000)]
		objs = objs[len(batch):]
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: &s.bucket,
			Delete: &types.Delete{Objects: batch, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return pathErr("delete", aws.ToString(batch[0].Key), s3Err(err))
		}
		for _, e := range out.Errors {
			if r, ok := s.rel(aws.ToString(e.Key)); ok && aws.ToString(e.Code) != "NoSuchKey" {
				return pathErr("delete", r, fmt.Errorf("stage: %s: %s", aws.ToString(e.Code), aws.ToString(e.Message)))
			}
		}
	}
	return nil
}

// Copy implements Store.
func (s *S3Store) Copy(ctx context.Context, src, dst string) error {
	fullSrc, err := s.d.Key(src)
	if err != nil {
		return pathErr("copy", src, err)
	}
	fullDst, err := s.d.Key(dst)
	if err != nil {
		return pathErr("copy", dst, err)
	}
	if _, err := s.stat(ctx, dst, fullDst); err == nil {
		return pathErr("copy", dst, ErrExists)
	} else if !errors.Is(err, ErrNotFound) {
		return pathErr("copy", dst, err)
	}
	if _, err := s.stat(ctx, src, fullSrc); err != nil {
		return pathErr("copy", src, err)
	}
	_, err = s.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket:      &s.bucket,
		Key:         &fullDst,
		CopySource:  aws.String(url.PathEscape(s.bucket) + "/" + escapeKey(fullSrc)),
		IfNoneMatch: aws.String("*"),
	})
	if err != nil {
		return pathErr("copy", dst, s3Err(err))
	}
	return nil
}

func escapeKey(k string) string {
	segs := strings.Split(k, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// ListUploads implements Uploads.
func (s *S3Store) ListUploads(ctx context.Context, prefix string) ([]Upload, error) {
	fullPrefix, err := s.d.ListPrefix(prefix)
	if err != nil {
		return nil, pathErr("list-uploads", prefix, err)
	}
	in := &s3.ListMultipartUploadsInput{Bucket: &s.bucket, Prefix: &fullPrefix}
	var ups []Upload
	for {
		out, err := s.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return nil, pathErr("list-uploads", prefix, s3Err(err))
		}
		for _, u := range out.Uploads {
			if r, ok := s.rel(aws.ToString(u.Key)); ok && strings.HasPrefix(r, prefix) {
				ups = append(ups, Upload{Key: r, ID: aws.ToString(u.UploadId), Initiated: aws.ToTime(u.Initiated)})
			}
		}
		if !aws.ToBool(out.IsTruncated) || out.NextKeyMarker == nil {
			return ups, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker // from the server
	}
}

// AbortUpload implements Uploads. Upload ids are bound to their key by S3,
// so an id from another stage cannot abort anything once the key is
// checked.
func (s *S3Store) AbortUpload(ctx context.Context, u Upload) error {
	full, err := s.d.Key(u.Key)
	if err != nil {
		return pathErr("abort", u.Key, err)
	}
	if u.ID == "" || len(u.ID) > 1024 || strings.ContainsFunc(u.ID, func(c rune) bool { return c <= ' ' || c >= 0x7f }) {
		return pathErr("abort", u.Key, fmt.Errorf("%w: malformed upload id", ErrInvalidKey))
	}
	if _, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket: &s.bucket, Key: &full, UploadId: aws.String(u.ID),
	}); err != nil {
		return pathErr("abort", u.Key, s3Err(err))
	}
	return nil
}
