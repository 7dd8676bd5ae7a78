# Evidence rankings keep their candidates instead of saving stacks (issue 36 item 3).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('placement', '0005_catalog_version'),
    ]

    operations = [
        migrations.AddField(
            model_name='sweep',
            name='request',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.CreateModel(
            name='EvaluationCandidate',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('rank', models.PositiveIntegerField(help_text='The rules rank of the stack in the composed result')),
                ('title', models.CharField(max_length=500)),
                ('profile', models.CharField(help_text='The workload profile the request was composed for', max_length=40)),
                ('composition', models.JSONField(default=dict)),
                ('run', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='evaluation_candidates', to='placement.simulationrun')),
                ('saved_stack', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='evaluation_candidates', to='placement.stack')),
                ('sweep', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='candidates', to='placement.sweep')),
            ],
            options={
                'ordering': ['sweep', 'rank'],
                'constraints': [models.UniqueConstraint(fields=('sweep', 'rank'), name='evaluation_candidate_rank_once')],
            },
        ),
    ]
