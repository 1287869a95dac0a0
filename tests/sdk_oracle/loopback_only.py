"""The SDK oracles' guard: no packet beyond 127.0.0.1 from the oracle's own
process. The SDKs' defaults name real hosts and metadata addresses (OCI's
resource principal 1.1 asks the metadata service even when told the
instance's id; google-auth's IAM endpoints are module constants), so every
connection and name look-up elsewhere is refused before it is sent, and a
case that forgot to point an SDK at a fake fails instead of leaving the
machine."""


def loopback_only():
    """No packet beyond 127.0.0.1 from this process: the SDK's defaults name
    the metadata address and real OCI hosts (its 1.1 path asks the metadata
    service even when told the instance's id), so every connection and name
    look-up elsewhere is refused before it is sent."""
    import socket
    loopback = ('127.0.0.1', '::1', 'localhost')
    real_getaddrinfo, real_connect, real_connect_ex = (
        socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex)

    def refuse(host):
        raise ConnectionRefusedError(f'oracle: no packet beyond 127.0.0.1 (asked for {host})')

    def getaddrinfo(host, *args, **kwargs):
        if host not in loopback:
            refuse(host)
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in loopback:
            refuse(address[0])
        return real_connect(self, address)

    def connect_ex(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in loopback:
            refuse(address[0])
        return real_connect_ex(self, address)

    socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex = getaddrinfo, connect, connect_ex
