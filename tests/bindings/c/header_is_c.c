/* sluice.h must compile as plain C99 and link from C. */
#include "sluice.h"

#include <stdio.h>

int main(void) {
  sluice_dataset* ds = NULL;
  if (sluice_abi_version() != SLUICE_ABI_VERSION) return 1;
  if (sluice_dataset_open("/nonexistent", 0, &ds) != SLUICE_ENOTFOUND) return 1;
  printf("%s\n", sluice_last_error());
  return 0;
}
