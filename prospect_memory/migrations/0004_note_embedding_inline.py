"""Keep a note's vector and ciphertexts inside its table row instead of the TOAST table.

PostgreSQL moves the widest values of a row past 2 KB out of line, into the TOAST table.
A note with a 768-dimension vector (3 KB) always passes that, so either the vector went out
(and every distance computed on it fetched and reassembled it again: recall compares each
of 20 vectors 19 times) or its title and body did (two more lookups per note read). Rows
are now moved out only when they would not fit a page (``toast_tuple_target`` 8160), and
then the ciphertexts and sources before the vector (storage MAIN).
Rows written before this migration keep their place until they are written again.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("prospect_memory", "0003_usage_events")]

    operations = [
        migrations.RunSQL(
            [
                "ALTER TABLE prospect_memory_note ALTER COLUMN embedding SET STORAGE MAIN",
                "ALTER TABLE prospect_memory_note SET (toast_tuple_target = 8160)",
            ],
            reverse_sql=[
                "ALTER TABLE prospect_memory_note RESET (toast_tuple_target)",
                "ALTER TABLE prospect_memory_note ALTER COLUMN embedding SET STORAGE EXTENDED",
            ],
        )
    ]
