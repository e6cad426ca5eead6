"""Running the product on a server: backups, restores and the doctor's checks."""
