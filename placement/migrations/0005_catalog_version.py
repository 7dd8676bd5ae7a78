from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("placement", "0004_story_band"),
    ]

    operations = [
        migrations.CreateModel(
            name="CatalogVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("value", models.PositiveBigIntegerField(default=0)),
                ("changed_at", models.DateTimeField()),
            ],
        ),
    ]
