// Shard cache across real processes (fork): see below.
