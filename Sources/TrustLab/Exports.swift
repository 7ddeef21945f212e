// `import TrustLab` brings the lab PKI (certificates, CRLs, OCSP, CT logs) with the servers.
@_exported import TrustLabPKI
