// Starts @20minutes/s3rver (which ships no start script) for the stores
// tests: 127.0.0.1, the given port and folder, the given access key pair
// (so SigV4 signatures are verified against it), and the given buckets.
// Path-style only: s3rver mis-verifies virtual-hosted requests.
//
//   node s3rver_launch.js PORT DIR ACCESS_KEY_ID SECRET_KEY [BUCKET...]
//
// Prints "s3rver listening on PORT" once ready; exits on SIGTERM.
'use strict';

const path = require('path');
const S3rver = require(path.join(__dirname, 'node_modules', '@20minutes', 's3rver'));
const AWSAccount = require(
  path.join(__dirname, 'node_modules', '@20minutes', 's3rver', 'lib', 'models', 'account'));

const FilesystemStore = require(
  path.join(__dirname, 'node_modules', '@20minutes', 's3rver', 'lib', 'stores', 'filesystem'));

// s3rver 4.0.4 walks no folder that holds the delimiter below the prefix, so
// a delimited listing leaves out the common prefix of every key two or more
// folders down ("u/" for "u/v/w"); S3 lists it. Delimited listings are
// answered here from the full listing instead, with S3's rule: a key with
// the delimiter after the prefix gives a common prefix, the others are
// objects, max-keys of them per page (s3rver counts objects only).
const listObjects = FilesystemStore.prototype.listObjects;
FilesystemStore.prototype.listObjects = async function listWithCommonPrefixes(bucket, options) {
  const { delimiter = '', prefix = '', maxKeys = Infinity } = options;
  if (!delimiter) return listObjects.call(this, bucket, options);
  const objects = [];
  const commonPrefixes = new Set();
  // Plain pages of 1000 (s3rver reads every listed object's metadata at
  // once: a whole large bucket in one page runs out of file descriptors).
  let startAfter = options.startAfter || '';
  for (;;) {
    const page = await listObjects.call(
      this, bucket, { ...options, delimiter: '', startAfter, maxKeys: 1000 });
    for (const object of page.objects) {
      const at = object.key.indexOf(delimiter, prefix.length);
      if (at !== -1) {
        commonPrefixes.add(object.key.slice(0, at + delimiter.length));
      } else if (objects.length === maxKeys) {
        return { objects, commonPrefixes: [...commonPrefixes].sort(), isTruncated: true };
      } else {
        objects.push(object);
      }
    }
    if (!page.isTruncated || page.objects.length === 0) break;
    startAfter = page.objects[page.objects.length - 1].key;
  }
  return { objects, commonPrefixes: [...commonPrefixes].sort(), isTruncated: false };
};

const [port, directory, accessKeyId, secretAccessKey, ...buckets] = process.argv.slice(2);
if (!port || !directory || !accessKeyId || !secretAccessKey) {
  console.error('usage: node s3rver_launch.js PORT DIR ACCESS_KEY_ID SECRET_KEY [BUCKET...]');
  process.exit(2);
}

AWSAccount.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);

const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory,
  silent: true,
  vhostBuckets: false,
  configureBuckets: buckets.map((name) => ({ name })),
});

server.run().then(
  () => console.log(`s3rver listening on ${port}`),
  (err) => {
    console.error(`s3rver failed to start: ${err.message}`);
    process.exit(1);
  },
);
process.on('SIGTERM', () => server.close().finally(() => process.exit(0)));
