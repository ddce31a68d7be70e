"""Keep note vectors inside the table row instead of the TOAST table.

A row with a vector (1.5 KB at 384 dimensions, 3 KB at 768) and its ciphertexts passes
PostgreSQL's 2 KB TOAST threshold, so by default the vector, the widest column, is moved
out of line and every distance computed on it fetches and reassembles it again: recall's
overlap pairs compare each of 20 vectors 19 times. Storage MAIN keeps the vector in the row
unless the row would not fit a page; the ciphertext and source columns are moved out first.
Rows written before this migration keep their place until they are re-embedded.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("prospect_memory", "0003_usage_events")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE prospect_memory_note ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql="ALTER TABLE prospect_memory_note ALTER COLUMN embedding SET STORAGE EXTENDED",
        )
    ]
