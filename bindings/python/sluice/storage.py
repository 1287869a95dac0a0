"""mosaicml-streaming's `streaming.base.storage`: its uploaders and
downloaders, over Sluice's stores (sluice.upload, sluice.download)."""
from sluice.download import (AlipanDownloader, AzureDataLakeDownloader, AzureDownloader,
                             CloudDownloader, DatabricksUnityCatalogDownloader, DBFSDownloader,
                             GCSDownloader, HFDownloader, LocalDownloader, OCIDownloader,
                             S3Downloader, SFTPDownloader, download_file)
from sluice.upload import (AzureDataLakeUploader, AzureUploader, CloudUploader, GCSUploader,
                           HFUploader, LocalUploader, OCIUploader, S3Uploader)

__all__ = ['CloudUploader', 'S3Uploader', 'GCSUploader', 'OCIUploader', 'LocalUploader',
           'AzureUploader', 'AzureDataLakeUploader', 'HFUploader', 'CloudDownloader',
           'S3Downloader', 'SFTPDownloader', 'GCSDownloader', 'OCIDownloader', 'AzureDownloader',
           'AzureDataLakeDownloader', 'HFDownloader', 'DatabricksUnityCatalogDownloader',
           'DBFSDownloader', 'AlipanDownloader', 'LocalDownloader', 'download_file']
